/** The Stragglers tab. (Being written: issue Q, the TypeScript renderer.) */
import { h } from '../dom';
import { ITab } from '../types';

export const stragglersTab: ITab = {
  key: 'stragglers',
  title: 'Stragglers',
  render(el, ctx) {
    el.append(h('pre', {}, JSON.stringify(ctx.data.tabs.stragglers, null, 1)));
  }
};
