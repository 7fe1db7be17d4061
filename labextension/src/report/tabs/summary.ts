/** The Summary tab. (Being written: issue Q, the TypeScript renderer.) */
import { h } from '../dom';
import { ITab } from '../types';

export const summaryTab: ITab = {
  key: 'summary',
  title: 'Summary',
  render(el, ctx) {
    el.append(h('pre', {}, JSON.stringify(ctx.data.tabs.summary, null, 1)));
  }
};
