import {
  BOKEH_BUNDLES,
  REPORT_MIME_TYPE,
  bokehBundleUrl,
  errorOf,
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

describe('parseReportPayload', () => {
  it('accepts the format 1 payload', () => {
    const parsed = parseReportPayload(payload());
    expect(parsed).toEqual({ payload: payload() });
  });

  it('keeps a missing title as empty', () => {
    const parsed = parseReportPayload(payload({ title: undefined }));
    expect('payload' in parsed && parsed.payload.title).toBe('');
  });

  it('asks for an upgrade when the payload is newer', () => {
    const parsed = parseReportPayload(payload({ format: 2 }));
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
    [payload({ run_id: '' }), /no run id/]
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
