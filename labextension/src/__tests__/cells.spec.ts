import { cellBody, findCell, locateCell, sameNotebook } from '../cells';

import { row } from './fixtures';

describe('go to cell', () => {
  const body = "df = spark.range(10)\ndf.groupBy('id').count().collect()";

  it('strips the %%perfmeasure line', () => {
    expect(cellBody(`%%perfmeasure --label x\n${body}`)).toBe(body);
    expect(cellBody(body)).toBe(body);
    expect(cellBody('%%perfmeasure\r\nx = 1')).toBe('x = 1');
  });

  it('finds the cell whose body is the run source', () => {
    const cells = [
      '%load_ext jupyter_perf',
      `%%perfmeasure --label other\nspark.range(5).count()`,
      `%%perfmeasure --label ui-test\n${body}\n`
    ];
    expect(findCell(cells, body + '\n')).toEqual({
      index: 2,
      ambiguous: false
    });
  });

  it('ignores trailing whitespace and CRLF', () => {
    const cells = [`%%perfmeasure\r\n${body.replace('\n', '   \r\n')}`];
    expect(findCell(cells, body)).toEqual({ index: 0, ambiguous: false });
  });

  it('prefers measured cells and reports ties', () => {
    const cells = [
      body,
      `%%perfmeasure\n${body}`,
      `%%perfmeasure -o r\n${body}`
    ];
    expect(findCell(cells, body)).toEqual({ index: 1, ambiguous: true });
    expect(findCell([body], body)).toEqual({ index: 0, ambiguous: false });
  });

  it('finds nothing for edited cells or empty sources', () => {
    expect(findCell([`%%perfmeasure\n${body} # edited`], body).index).toBe(-1);
    expect(findCell(['', '%%perfmeasure'], '').index).toBe(-1);
  });

  it('finds the cell by its id first, even after it was edited or moved', () => {
    const cells = [
      { id: 'a1', source: '%load_ext jupyter_perf' },
      { id: 'b2', source: `%%perfmeasure\n${body}` },
      { id: 'c3', source: `%%perfmeasure --label ui\n${body} # edited` }
    ];
    // c3 ran `body`, then was edited: its id still finds it, the source would not
    expect(locateCell(cells, { cell_id: 'c3', source: body })).toEqual({
      index: 2,
      ambiguous: false,
      by: 'id'
    });
    // the id wins over an identical cell elsewhere (no "several cells" tie)
    const twins = [cells[1], { id: 'd4', source: `%%perfmeasure\n${body}` }];
    expect(locateCell(twins, { cell_id: 'd4', source: body })).toEqual({
      index: 1,
      ambiguous: false,
      by: 'id'
    });
  });

  it('falls back to the source when the id is missing or unknown', () => {
    const cells = [
      { id: 'a1', source: '%load_ext jupyter_perf' },
      { id: 'b2', source: `%%perfmeasure\n${body}` }
    ];
    for (const cell_id of [undefined, null, '', 'gone']) {
      expect(locateCell(cells, { cell_id, source: body })).toEqual({
        index: 1,
        ambiguous: false,
        by: 'source'
      });
    }
    expect(
      locateCell(
        [...cells, { id: 'x', source: `%%perfmeasure -o r\n${body}` }],
        {
          source: body
        }
      )
    ).toEqual({ index: 1, ambiguous: true, by: 'source' });
    expect(locateCell(cells, { cell_id: 'gone', source: 'other()' })).toEqual({
      index: -1,
      ambiguous: false,
      by: null
    });
    expect(locateCell([], { cell_id: 'a1', source: '' }).index).toBe(-1);
  });

  it('matches notebooks by contents path, or by the recorded absolute path', () => {
    expect(sameNotebook('work/etl.ipynb', row())).toBe(true);
    expect(sameNotebook('etl.ipynb', row())).toBe(false);
    expect(sameNotebook('work/etl.ipynb', row({ notebook_path: null }))).toBe(
      true
    );
    expect(sameNotebook('etl.ipynb', row({ notebook_path: null }))).toBe(true);
    expect(sameNotebook('l.ipynb', row({ notebook_path: null }))).toBe(false);
    expect(
      sameNotebook('a.ipynb', row({ notebook_path: null, notebook: '' }))
    ).toBe(false);
  });
});
