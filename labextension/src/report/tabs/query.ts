/** The Query tab. (Being written: issue Q, the TypeScript renderer.) */
import { h } from '../dom';
import { ITab } from '../types';

export const queryTab: ITab = {
  key: 'query',
  title: 'Query',
  render(el, ctx) {
    el.append(h('pre', {}, JSON.stringify(ctx.data.tabs.query, null, 1)));
  }
};
