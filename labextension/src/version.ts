/**
 * The frontend's version. It must equal `jupyter_perf.__version__` and the
 * `version` in package.json (tests/test_packaging.py checks all three); the
 * plugin compares it with `GET /jupyter-perf/api/version` and warns on a mismatch.
 */
export const FRONTEND_VERSION = '0.1.0';
