/** The What-if tab. (Being written: issue Q, the TypeScript renderer.) */
import { h } from '../dom';
import { ITab } from '../types';

export const whatifTab: ITab = {
  key: 'whatif',
  title: 'What-if',
  render(el, ctx) {
    el.append(h('pre', {}, JSON.stringify(ctx.data.tabs.whatif, null, 1)));
  }
};
