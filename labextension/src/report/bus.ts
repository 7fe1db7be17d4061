/** The selection one tab makes and the others highlight (types.ts, Selection). */
import { ISelectionBus, Selection } from './types';

export function selectionBus(): ISelectionBus {
  let current: Selection = { kind: 'none' };
  const listeners = new Set<(s: Selection, source: string) => void>();
  return {
    select(selection: Selection, source: string): void {
      current = selection;
      for (const listener of [...listeners]) {
        listener(selection, source);
      }
    },
    subscribe(listener: (s: Selection, source: string) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    current: () => current
  };
}
