/**
 * Drawing a BokehJS model into a tab: `Plotting.show` puts it in a document
 * of its own; the views and that document go when the report is disposed.
 */
import { IBokehApi, ITabContext } from './types';

/** Draw `obj` (a figure or a layout built with `ctx.bokeh.Plotting`) into `el`. */
export async function showModel(
  ctx: ITabContext,
  obj: any,
  el: HTMLElement
): Promise<any> {
  const bokeh = ctx.bokeh;
  const shown = await bokeh.Plotting.show(obj, el);
  const views: any[] = Array.isArray(shown) ? shown : [shown];
  ctx.onDispose(() => removeViews(bokeh, views));
  return views[0];
}

export function removeViews(bokeh: IBokehApi, views: any[]): void {
  const docs = new Set(views.map(v => v?.model?.document).filter(d => !!d));
  const index = (bokeh as any).index;
  for (const view of views) {
    view?.remove?.();
    index?.delete?.(view); // Plotting.show registered it among the page's root views
  }
  for (const doc of docs) {
    // Every view the document's standalone embedding built — its roots and the ones
    // show() does not return (its notifications view) — is in the document's own view
    // manager and in BokehJS's global index (Bokeh.index.roots): delete it from both.
    const manager = doc.views_manager;
    if (manager && typeof manager[Symbol.iterator] === 'function') {
      for (const view of [...manager]) {
        view?.remove?.();
        manager.delete?.(view);
        index?.delete?.(view);
      }
    }
  }
  for (const doc of docs) {
    const i = bokeh.documents.indexOf(doc);
    if (i >= 0) {
      bokeh.documents.splice(i, 1);
    }
  }
}

/**
 * The components' stacked horizontal bars (the Summary's breakdown, the Stages tab's
 * per-stage bars): one look everywhere — estimated parts hatched, white seams — with a
 * hover of `tooltips`. `B`: the BokehJS API (its models by name, as the tabs use it);
 * `source` has columns y, left, right, color, alpha and hatch.
 */
export function componentBars(
  B: any,
  fig: any,
  source: any,
  tooltips: [string, string][]
): void {
  fig.hbar({
    y: { field: 'y' },
    left: { field: 'left' },
    right: { field: 'right' },
    height: 0.7,
    source,
    fill_color: { field: 'color' },
    fill_alpha: { field: 'alpha' },
    line_color: 'white',
    hatch_pattern: { field: 'hatch' },
    hatch_color: '#444444',
    hatch_alpha: 0.55,
    hatch_scale: 8
  });
  fig.add_tools(new B.HoverTool({ tooltips }));
  fig.ygrid.visible = false;
}
