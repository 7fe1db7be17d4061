/** The Timeline tab. (Being written: issue Q, the TypeScript renderer.) */
import { h } from '../dom';
import { ITab } from '../types';

export const timelineTab: ITab = {
  key: 'timeline',
  title: 'Timeline',
  render(el, ctx) {
    el.append(h('pre', {}, JSON.stringify(ctx.data.tabs.timeline, null, 1)));
  }
};
