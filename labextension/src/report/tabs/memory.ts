/** The Memory tab. (Being written: issue Q, the TypeScript renderer.) */
import { h } from '../dom';
import { ITab } from '../types';

export const memoryTab: ITab = {
  key: 'memory',
  title: 'Memory',
  render(el, ctx) {
    el.append(h('pre', {}, JSON.stringify(ctx.data.tabs.memory, null, 1)));
  }
};
