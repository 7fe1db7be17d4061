/**
 * The frontend's version. It must equal `jupyter_perf.__version__` and the
 * `version` in package.json (tests/test_packaging.py checks all three); the
 * plugin compares it with `GET /jupyter-perf/api/version` and warns on a mismatch.
 */
export const FRONTEND_VERSION = '0.1.0';

/** A one-line warning when the frontend and the server extension differ, else null. */
export function versionMismatch(
  frontend: string,
  server: string | null | undefined
): string | null {
  if (!server) {
    return (
      'The jupyter_perf server extension is not answering: ' +
      'run `jupyter server extension list` and restart JupyterLab.'
    );
  }
  if (server.trim() === frontend.trim()) {
    return null;
  }
  return (
    `jupyter-perf: the JupyterLab extension is ${frontend} but the server extension is ` +
    `${server}; reinstall one package version and restart JupyterLab (then reload the page).`
  );
}
