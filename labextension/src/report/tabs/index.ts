/** The report's tabs, in the order the tab bar shows them. */
import { ITab } from '../types';
import { historyTab } from './history';
import { memoryTab } from './memory';
import { profileTab } from './profile';
import { queryTab } from './query';
import { stagesTab } from './stages';
import { stragglersTab } from './stragglers';
import { summaryTab } from './summary';
import { timelineTab } from './timeline';
import { whatifTab } from './whatif';

export const TABS: ITab[] = [
  summaryTab,
  queryTab,
  timelineTab,
  stagesTab,
  stragglersTab,
  whatifTab,
  memoryTab,
  profileTab,
  historyTab
];
