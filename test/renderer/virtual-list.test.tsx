// @vitest-environment happy-dom
/** The traffic table renders a window of its rows, not all 10,000 (UI logic; no server). */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { useState } from 'react';
import { visibleRange } from '../../renderer/src/components/VirtualList';
import { ROW_HEIGHT, TrafficTable } from '../../renderer/src/pages/Traffic';
import { entry } from './fakes';

afterEach(cleanup);

const many = Array.from({ length: 10_000 }, (_, index) => entry(10_000 - index));

function Table({ height = 360 }: { height?: number }) {
  const [selected, setSelected] = useState(-1);
  return (
    <TrafficTable
      entries={many}
      selectedIndex={selected}
      onSelectIndex={setSelected}
      fallbackHeight={height}
    />
  );
}

const rowIds = () => screen.getAllByTestId('traffic-row').map((row) => Number(row.dataset.entryId));

describe('visibleRange', () => {
  it('covers the visible rows plus the overscan, clamped to the list', () => {
    expect(visibleRange(10_000, 0, 360, 36, 8)).toEqual({ start: 0, end: 19 });
    expect(visibleRange(10_000, 36 * 5000, 360, 36, 8)).toEqual({ start: 4992, end: 5019 });
    expect(visibleRange(10_000, 36 * 10_000, 360, 36, 8)).toEqual({ start: 9991, end: 10_000 });
    expect(visibleRange(0, 0, 360, 36, 8)).toEqual({ start: 0, end: 0 });
  });
});

describe('TrafficTable with 10,000 rows', () => {
  it('renders only a window of rows and sizes the scroll area for all of them', () => {
    render(<Table />);
    const ids = rowIds();
    expect(ids.length).toBeGreaterThan(10);
    expect(ids.length).toBeLessThanOrEqual(30);
    expect(ids[0]).toBe(10_000);
    const sizer = document.querySelector<HTMLElement>('.vlist-sizer');
    expect(sizer?.style.height).toBe(`${10_000 * ROW_HEIGHT}px`);
    expect(screen.getByRole('grid').getAttribute('aria-rowcount')).toBe('10001');
  });

  it('renders the rows at the scroll position', () => {
    render(<Table />);
    const scroller = document.querySelector<HTMLElement>('.vlist-scroll') as HTMLElement;
    scroller.scrollTop = ROW_HEIGHT * 6000;
    fireEvent.scroll(scroller);
    const ids = rowIds();
    expect(ids.length).toBeLessThanOrEqual(30);
    // Row index 6000 holds entry id 4000; the window starts a few rows (the overscan) above it.
    expect(ids).toContain(4000);
    expect(Math.max(...ids)).toBeLessThanOrEqual(4008);
    const window = document.querySelector<HTMLElement>('.vlist-window');
    expect(window?.style.transform).toBe(`translateY(${(6000 - 8) * ROW_HEIGHT}px)`);
  });

  it('moves the selection with the keyboard and keeps it in view', () => {
    render(<Table />);
    const grid = screen.getByRole('grid');
    fireEvent.keyDown(grid, { key: 'ArrowDown' });
    fireEvent.keyDown(grid, { key: 'ArrowDown' });
    expect(grid.getAttribute('aria-activedescendant')).toBe('traffic-row-9999');
    expect(document.getElementById('traffic-row-9999')?.getAttribute('aria-selected')).toBe('true');
    fireEvent.keyDown(grid, { key: 'End' });
    expect(grid.getAttribute('aria-activedescendant')).toBe('traffic-row-1');
    expect(rowIds()).toContain(1);
    expect(rowIds().length).toBeLessThanOrEqual(30);
  });
});
