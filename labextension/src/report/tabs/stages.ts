/** The Stages tab. (Being written: issue Q, the TypeScript renderer.) */
import { h } from '../dom';
import { ITab } from '../types';

export const stagesTab: ITab = {
  key: 'stages',
  title: 'Stages',
  render(el, ctx) {
    el.append(h('pre', {}, JSON.stringify(ctx.data.tabs.stages, null, 1)));
  }
};
