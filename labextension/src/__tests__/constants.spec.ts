/**
 * The facts shared with Python come from constants.json, the one file
 * jupyter_perf/constants.py reads too (tests/test_constants.py checks that
 * side): the exported names are its values, not copies.
 */
import constants from '../constants.json';

import {
  BOKEH_BUNDLES,
  BOKEH_NAMESPACE,
  ITEM_ENCODING,
  REPORT_FORMAT,
  REPORT_MIME_TYPE
} from '../reportpayload';

import { API_NAMESPACE } from '../request';

describe('constants.json', () => {
  it('is what the report renderer uses', () => {
    expect(REPORT_MIME_TYPE).toBe(constants.report_mime_type);
    expect(REPORT_FORMAT).toBe(constants.report_format);
    expect(ITEM_ENCODING).toBe(constants.item_encoding);
    expect(BOKEH_NAMESPACE).toBe(constants.bokeh_namespace);
    expect(BOKEH_BUNDLES).toEqual(constants.bokeh_bundles);
  });

  it('is what the REST client uses', () => {
    expect(API_NAMESPACE).toBe(constants.api_namespace);
  });

  it('holds the contract values', () => {
    expect(constants.report_mime_type).toBe(
      'application/vnd.jupyter-perf.report+json'
    );
    expect(constants.api_namespace).toBe('jupyter-perf/api');
    expect(constants.bokeh_namespace).toBe('jupyter-perf/static/bokeh');
    expect(constants.item_encoding).toBe('json+gzip+base64');
    expect(constants.bokeh_bundles[0]).toBe('bokeh');
  });
});
