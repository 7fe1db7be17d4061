import { ServerConnection } from '@jupyterlab/services';

import {
  ICompareExportResult,
  IExportResult,
  IRunDetail,
  IRunsPage
} from './types';

import { requestAPI, requestText } from './request';

/**
 * Typed calls of the REST API (docs/rest-api.md). Every call goes through
 * ServerConnection, so the user's token/cookie authenticates it.
 */
export class RunsAPI {
  constructor(readonly serverSettings: ServerConnection.ISettings) {}

  version(): Promise<{ version: string }> {
    return requestAPI('version', this.serverSettings);
  }

  list(params: {
    limit: number;
    offset: number;
    q?: string;
    notebook?: string;
    regressed?: boolean;
  }): Promise<IRunsPage> {
    const query = new URLSearchParams({
      limit: String(params.limit),
      offset: String(params.offset)
    });
    if (params.q) {
      query.set('q', params.q);
    }
    if (params.notebook) {
      query.set('notebook', params.notebook);
    }
    if (params.regressed) {
      query.set('regressed', '1');
    }
    return requestAPI(`runs?${query.toString()}`, this.serverSettings);
  }

  get(runId: string): Promise<IRunDetail> {
    return requestAPI(`runs/${encodeURIComponent(runId)}`, this.serverSettings);
  }

  report(runId: string, refresh = false): Promise<string> {
    return requestText(
      `runs/${encodeURIComponent(runId)}/report${refresh ? '?refresh=1' : ''}`,
      this.serverSettings
    );
  }

  export(runId: string, path?: string): Promise<IExportResult> {
    return requestAPI(
      `runs/${encodeURIComponent(runId)}/export`,
      this.serverSettings,
      {
        method: 'POST',
        body: JSON.stringify(path ? { path } : {})
      }
    );
  }

  /** The standalone HTML comparison of two runs (B against A). */
  compare(a: string, b: string): Promise<string> {
    return requestText(
      `compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}`,
      this.serverSettings
    );
  }

  exportComparison(
    a: string,
    b: string,
    path?: string
  ): Promise<ICompareExportResult> {
    return requestAPI(
      `compare/${encodeURIComponent(a)}/${encodeURIComponent(b)}/export`,
      this.serverSettings,
      { method: 'POST', body: JSON.stringify(path ? { path } : {}) }
    );
  }

  delete(runId: string): Promise<{ run_id: string; deleted: boolean }> {
    return requestAPI(
      `runs/${encodeURIComponent(runId)}`,
      this.serverSettings,
      {
        method: 'DELETE'
      }
    );
  }
}
