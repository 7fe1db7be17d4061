import { URLExt } from '@jupyterlab/coreutils';

import { ServerConnection } from '@jupyterlab/services';

import constants from './constants.json';

/**
 * The REST namespace of the jupyter_perf server extension (docs/rest-api.md),
 * shared with Python in constants.json.
 */
export const API_NAMESPACE: string = constants.api_namespace;

/**
 * An error from the server extension: `message` is its one-line `error`.
 */
export class PerfAPIError extends Error {
  constructor(
    readonly status: number,
    message: string
  ) {
    super(message);
    this.name = 'PerfAPIError';
  }
}

async function send(
  endPoint: string,
  serverSettings: ServerConnection.ISettings,
  init: RequestInit
): Promise<{ response: Response; text: string }> {
  const requestUrl = URLExt.join(
    serverSettings.baseUrl,
    API_NAMESPACE,
    endPoint
  );
  let response: Response;
  try {
    // makeRequest adds the token, the XSRF header and credentials (cookies).
    response = await ServerConnection.makeRequest(
      requestUrl,
      init,
      serverSettings
    );
  } catch (error) {
    throw new ServerConnection.NetworkError(error as any);
  }
  const text = await response.text();
  if (!response.ok) {
    let message = text;
    try {
      const data = JSON.parse(text);
      message = data.error || data.message || text;
    } catch {
      // not JSON: keep the text
    }
    throw new PerfAPIError(
      response.status,
      message || `${response.status} ${response.statusText}`
    );
  }
  return { response, text };
}

/**
 * Call the jupyter_perf server extension and parse its JSON answer.
 *
 * @param endPoint API REST end point under `jupyter-perf/api/`
 * @param serverSettings The server settings to use for the request
 * @param init Initial values for the request
 */
export async function requestAPI<T>(
  endPoint: string,
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {}
): Promise<T> {
  const { text } = await send(endPoint, serverSettings, init);
  return (text.length ? JSON.parse(text) : {}) as T;
}

/**
 * Call the server extension for a text answer (the report's HTML).
 */
export async function requestText(
  endPoint: string,
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {}
): Promise<string> {
  return (await send(endPoint, serverSettings, init)).text;
}
