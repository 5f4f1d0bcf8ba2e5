import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type KeyboardEvent,
  type ReactNode,
} from 'react';

export interface VirtualListProps<T> {
  items: readonly T[];
  /** Every row is exactly this tall (px): what makes windowing a division. */
  rowHeight: number;
  getKey: (item: T) => string | number;
  renderRow: (item: T, index: number, selected: boolean) => ReactNode;
  /** Rows rendered above and below the visible ones, so fast scrolling shows no gaps. */
  overscan?: number;
  /** Used until the container's real height is known (and where it cannot be measured). */
  fallbackHeight?: number;
  selectedIndex?: number;
  onSelectIndex?: (index: number) => void;
  className?: string;
  /** The id of the row element for `index`, for aria-activedescendant. */
  rowId?: (index: number) => string;
  label: string;
  /** A header row, shown above the scrolling rows inside the same grid. */
  header?: ReactNode;
}

/** Which rows to render for a scroll position: the visible ones plus `overscan` each side. */
export function visibleRange(
  count: number,
  scrollTop: number,
  viewportHeight: number,
  rowHeight: number,
  overscan: number,
): { start: number; end: number } {
  if (count === 0) return { start: 0, end: 0 };
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const visible = Math.ceil(viewportHeight / rowHeight) + 1;
  const start = Math.max(0, Math.min(first, count - 1) - overscan);
  const end = Math.min(count, first + visible + overscan);
  return { start, end };
}

/**
 * A list that renders only the rows in view (fixed row height): 10,000 rows cost the same as 30.
 * Keyboard: ↑/↓, Page Up/Down, Home/End move the selection and keep it in view.
 */
export function VirtualList<T>(props: VirtualListProps<T>) {
  const { items, rowHeight, getKey, renderRow, overscan = 8, fallbackHeight = 480 } = props;
  const { selectedIndex = -1, onSelectIndex, className, rowId, label, header } = props;
  const container = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewportHeight, setViewportHeight] = useState(fallbackHeight);

  useLayoutEffect(() => {
    const element = container.current;
    if (!element) return;
    const measure = () => {
      if (element.clientHeight > 0) setViewportHeight(element.clientHeight);
    };
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  // The list shrank below the scroll position (a filter): follow it back instead of showing nothing.
  const maxScroll = Math.max(0, items.length * rowHeight - viewportHeight);
  useEffect(() => {
    const element = container.current;
    if (element && scrollTop > maxScroll) {
      element.scrollTop = maxScroll;
      setScrollTop(maxScroll);
    }
  }, [maxScroll, scrollTop]);

  const scrollIntoView = useCallback(
    (index: number) => {
      const element = container.current;
      if (!element) return;
      const top = index * rowHeight;
      const bottom = top + rowHeight;
      if (top < element.scrollTop) element.scrollTop = top;
      else if (bottom > element.scrollTop + viewportHeight) element.scrollTop = bottom - viewportHeight;
      setScrollTop(element.scrollTop);
    },
    [rowHeight, viewportHeight],
  );

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (!onSelectIndex || items.length === 0) return;
    const page = Math.max(1, Math.floor(viewportHeight / rowHeight) - 1);
    const from = selectedIndex < 0 ? -1 : selectedIndex;
    const moves: Record<string, number> = {
      ArrowDown: from + 1,
      ArrowUp: from - 1,
      PageDown: from + page,
      PageUp: from - page,
      Home: 0,
      End: items.length - 1,
    };
    const target = moves[event.key];
    if (target === undefined) return;
    event.preventDefault();
    const index = Math.max(0, Math.min(items.length - 1, target));
    onSelectIndex(index);
    scrollIntoView(index);
  };

  const { start, end } = visibleRange(items.length, scrollTop, viewportHeight, rowHeight, overscan);
  const rows: ReactNode[] = [];
  for (let index = start; index < end; index += 1) {
    const item = items[index] as T;
    rows.push(
      <div key={getKey(item)} className="vlist-row-slot" onClick={() => onSelectIndex?.(index)}>
        {renderRow(item, index, index === selectedIndex)}
      </div>,
    );
  }

  return (
    <div
      className={`vlist ${className ?? ''}`}
      role="grid"
      aria-label={label}
      aria-rowcount={items.length + (header ? 1 : 0)}
      aria-activedescendant={selectedIndex >= 0 && rowId ? rowId(selectedIndex) : undefined}
      tabIndex={0}
      onKeyDown={onKeyDown}
      data-testid="virtual-list"
    >
      {header}
      <div
        ref={container}
        className="vlist-scroll"
        role="rowgroup"
        onScroll={(event) => setScrollTop(event.currentTarget.scrollTop)}
      >
        {/* Positions are set through the CSSOM (React's style prop), which the console's CSP allows. */}
        <div className="vlist-sizer" style={{ height: items.length * rowHeight }}>
          <div className="vlist-window" style={{ transform: `translateY(${start * rowHeight}px)` }}>
            {rows}
          </div>
        </div>
      </div>
    </div>
  );
}
