import {
  BOKEH_BUNDLES,
  ITEM_ENCODING,
  REPORT_DATA_ENCODING,
  decodeItem,
  REPORT_MIME_TYPE,
  bokehBundleUrl,
  errorOf,
  serverVersionOf,
  parseReportPayload
} from '../reportpayload';

function payload(overrides: Record<string, unknown> = {}) {
  return {
    format: 1,
    run_id: '20261122-115900-abcdef',
    title: 'daily aggregate',
    bokeh_version: '3.9.2',
    item: {
      target_id: null,
      root_id: 'p1001',
      doc: { version: '3.9.2', roots: [] },
      version: '3.9.2'
    },
    ...overrides
  };
}

/**
 * What render/inline.py encode_item() writes for this item:
 * {"target_id": null, "root_id": "p1001", "doc": {"version": "3.9.2",
 * "roots": [], "title": "é <b>"}, "version": "3.9.2"}
 */
const ENCODED =
  'H4sIAAAAAAACA6tWKkksSk8tic9MUbLKK83J0VEqys+HcJUKDA0MDJV0lFLyk5WsqpXKUouKM/PzgBLGepZ6RkoQpcVKVtGxOkolmSU5qUCpwysVbJLslGp1MJTXAgDAQdNAbAAAAA==';

describe('parseReportPayload', () => {
  it('accepts the format 1 payload', () => {
    const parsed = parseReportPayload(payload());
    expect(parsed).toEqual({
      payload: { ...payload(), kind: 'item', item_encoding: null }
    });
  });

  it('accepts an encoded item, and decodes it', async () => {
    const parsed = parseReportPayload(
      payload({ item_encoding: ITEM_ENCODING, item: ENCODED })
    );
    expect('payload' in parsed).toBe(true);
    const item = await decodeItem(
      (parsed as { payload: Parameters<typeof decodeItem>[0] }).payload
    );
    expect(item).toEqual({
      target_id: null,
      root_id: 'p1001',
      doc: { version: '3.9.2', roots: [], title: 'é <b>' },
      version: '3.9.2'
    });
  });

  it('says so when an encoded item is damaged', async () => {
    const parsed = parseReportPayload(
      payload({ item_encoding: ITEM_ENCODING, item: 'bm90IGd6aXA=' })
    ) as { payload: Parameters<typeof decodeItem>[0] };
    await expect(decodeItem(parsed.payload)).rejects.toThrow(
      /could not be decompressed/
    );
  });

  it('keeps a missing title as empty', () => {
    const parsed = parseReportPayload(payload({ title: undefined }));
    expect('payload' in parsed && parsed.payload.title).toBe('');
  });

  it('accepts the format 2 payload (the report data)', () => {
    const data = {
      format: 2,
      run_id: 'r1',
      title: 't <b>',
      bokeh_version: '3.9.2',
      encoding: REPORT_DATA_ENCODING,
      data: 'H4sI'
    };
    expect(parseReportPayload(data)).toEqual({
      payload: { ...data, kind: 'data', encoding: undefined }
    });
    expect(
      'error' in parseReportPayload({ ...data, encoding: 'json+zstd' })
    ).toBe(true);
    expect('error' in parseReportPayload({ ...data, data: '' })).toBe(true);
  });

  it('asks for an upgrade when the payload is newer', () => {
    const parsed = parseReportPayload(payload({ format: 3 }));
    expect('error' in parsed && parsed.error).toMatch(/newer jupyter-perf/);
    expect('error' in parsed && parsed.error).toMatch(/upgrade/);
  });

  it.each([
    [null, /not a JSON object/],
    [[1, 2], /not a JSON object/],
    ['{"format": 1}', /not a JSON object/],
    [payload({ format: '1' }), /no format number/],
    [payload({ format: 0 }), /unknown report format 0/],
    [payload({ bokeh_version: '' }), /no valid Bokeh version/],
    [payload({ bokeh_version: '../../etc' }), /no valid Bokeh version/],
    [payload({ bokeh_version: '3.9.2/../x' }), /no valid Bokeh version/],
    [payload({ item: null }), /no Bokeh item/],
    [payload({ item: { root_id: 'p1' } }), /no Bokeh item/],
    [payload({ item: { doc: {} } }), /no Bokeh item/],
    [payload({ run_id: '' }), /no run id/],
    [payload({ item_encoding: 'json+zstd' }), /does not read; upgrade/],
    [payload({ item_encoding: ITEM_ENCODING }), /no Bokeh item/],
    [payload({ item_encoding: ITEM_ENCODING, item: '' }), /no Bokeh item/]
  ])('refuses %p in one line', (data, reason) => {
    const parsed = parseReportPayload(data);
    expect('error' in parsed).toBe(true);
    const error = (parsed as { error: string }).error;
    expect(error).toMatch(reason);
    expect(error).not.toContain('\n');
  });

  it.each(['3.9.2', '3.10.0.dev3', '3.4.0rc1', '3.9.2+12.gabcdef'])(
    'takes Bokeh version %p',
    version => {
      expect(
        'payload' in parseReportPayload(payload({ bokeh_version: version }))
      ).toBe(true);
    }
  );
});

describe('bokehBundleUrl', () => {
  it('names the versioned bundle under the base URL', () => {
    expect(bokehBundleUrl('/', '3.9.2', 'bokeh')).toBe(
      '/jupyter-perf/static/bokeh/3.9.2/bokeh.min.js'
    );
    expect(
      bokehBundleUrl('http://h:8888/user/me', '3.9.2', 'bokeh-tables')
    ).toBe(
      'http://h:8888/user/me/jupyter-perf/static/bokeh/3.9.2/bokeh-tables.min.js'
    );
  });

  it('loads the core before its plugins', () => {
    expect(BOKEH_BUNDLES[0]).toBe('bokeh');
    expect(BOKEH_BUNDLES).toEqual(
      expect.arrayContaining(['bokeh-widgets', 'bokeh-tables'])
    );
  });

  it('has the contract MIME type', () => {
    expect(REPORT_MIME_TYPE).toBe('application/vnd.jupyter-perf.report+json');
  });
});

describe('errorOf', () => {
  it('reads the server extension error line', () => {
    expect(errorOf('{"error": "this Jupyter server has Bokeh 3.9.2"}')).toBe(
      'this Jupyter server has Bokeh 3.9.2'
    );
    expect(errorOf('<html>404</html>')).toBeNull();
    expect(errorOf('{"message": "x"}')).toBeNull();
  });
});

describe('serverVersionOf', () => {
  it('reads the version the static route says the server has, valid only', () => {
    const body = (v: unknown) =>
      JSON.stringify({ error: 'x', bokeh_version: v });
    expect(serverVersionOf(body('3.9.2'))).toBe('3.9.2');
    expect(serverVersionOf(body('../../etc'))).toBeNull();
    expect(serverVersionOf(body(3))).toBeNull();
    expect(serverVersionOf('<html>404</html>')).toBeNull();
  });
});
