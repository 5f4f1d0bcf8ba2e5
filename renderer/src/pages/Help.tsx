import { Fragment, useEffect, useRef, useState, type ReactNode } from 'react';
import { CopyButton } from '../components/CopyButton';
import { Loading, Notice } from '../components/States';
import {
  HELP_HOME,
  helpPagePath,
  helpPlaceHref,
  loadHelpPage,
  resolveHelpLink,
  type HelpPlace,
} from '../help/docs';
import { parseMarkdown, plainText, type Block, type Inline } from '../help/markdown';

type Loaded =
  { page: string; blocks: Block[] } | { page: string; missing: true } | { page: string; error: string };

interface HelpProps extends HelpPlace {
  /** The operator followed a link here (not the console's first load): keyboard focus goes where it leads. */
  followed?: boolean;
}

/**
 * A help page (README.md or docs/<page>.md), drawn from its Markdown as React elements, at the heading the
 * fragment names. A help link the operator follows takes keyboard focus to where it leads, as a section jump
 * does; opening the console on a help page leaves focus at the top, with the skip link and the tabs.
 */
export function Help({ page, section, followed = false }: HelpProps) {
  const [loaded, setLoaded] = useState<Loaded>();
  const article = useRef<HTMLElement>(null);
  const moved = useRef(followed);
  moved.current = followed;

  useEffect(() => {
    let live = true;
    const load = loadHelpPage(page);
    if (!load) {
      setLoaded({ page, missing: true });
      return;
    }
    load.then(
      (text) => live && setLoaded({ page, blocks: parseMarkdown(text) }),
      (error: unknown) =>
        live && setLoaded({ page, error: error instanceof Error ? error.message : String(error) }),
    );
    return () => {
      live = false;
    };
  }, [page]);

  const blocks = loaded?.page === page && 'blocks' in loaded ? loaded.blocks : undefined;
  useEffect(() => {
    if (!blocks) return;
    const title = blocks.find((block) => block.kind === 'heading');
    if (title?.kind === 'heading') document.title = `${plainText(title.children)} · Help · Agent Bridge`;
    const headings = [...(article.current?.querySelectorAll<HTMLElement>('[data-anchor]') ?? [])];
    const target = (section && headings.find((heading) => heading.dataset.anchor === section)) || headings[0];
    if (section && target) target.scrollIntoView({ block: 'start' });
    else window.scrollTo?.(0, 0);
    if (moved.current && target) {
      // Focusable for this jump only, as the skip link does with <main>.
      target.tabIndex = -1;
      target.addEventListener('blur', () => target.removeAttribute('tabindex'), { once: true });
      target.focus({ preventScroll: true });
    }
  }, [blocks, section]);

  if (!loaded || loaded.page !== page) return <Loading label="Loading the help page…" />;
  if ('missing' in loaded || 'error' in loaded) {
    return (
      <div className="page help" data-testid="help-page">
        <Notice
          tone={'error' in loaded ? 'error' : 'warning'}
          title={'error' in loaded ? 'The help page did not load' : `There is no help page “${page}”`}
          message={'error' in loaded ? `${loaded.error} Reload the console to try again.` : undefined}
          testId="help-missing"
        >
          <p className="notice-message">
            <a href={helpPlaceHref({ page: HELP_HOME })}>See every help page</a>
          </p>
        </Notice>
      </div>
    );
  }
  const from = helpPagePath(page) ?? 'README.md';
  return (
    <div className="page help" data-testid="help-page" data-page={page}>
      {page === HELP_HOME ? null : (
        <p className="help-crumbs">
          <a href={helpPlaceHref({ page: HELP_HOME })}>All help pages</a>
        </p>
      )}
      <article className="card help-article" ref={article}>
        <Blocks blocks={loaded.blocks} from={from} />
      </article>
    </div>
  );
}

function Blocks({ blocks, from }: { blocks: Block[]; from: string }) {
  return (
    <>
      {blocks.map((block, index) => (
        <BlockView key={index} block={block} from={from} />
      ))}
    </>
  );
}

function BlockView({ block, from }: { block: Block; from: string }) {
  switch (block.kind) {
    case 'heading': {
      const Heading = `h${Math.min(block.level, 6)}` as 'h1';
      return (
        <Heading data-anchor={block.anchor}>
          <Inlines inlines={block.children} from={from} />
        </Heading>
      );
    }
    case 'paragraph':
      // A paragraph of images only (the README's screenshot) has nothing to show here.
      return block.children.every((inline) => inline.kind === 'image' || isBlank(inline)) ? null : (
        <p>
          <Inlines inlines={block.children} from={from} />
        </p>
      );
    case 'code':
      return (
        <div className="help-code">
          <pre>
            <code>{block.text}</code>
          </pre>
          {['sh', 'bash', 'shell'].includes(block.language) ? (
            <CopyButton value={block.text} label="Copy these commands" />
          ) : null}
        </div>
      );
    case 'list': {
      const items = block.items.map((item, index) => (
        <li key={index}>
          <Blocks blocks={item} from={from} />
        </li>
      ));
      return block.ordered ? <ol start={block.start}>{items}</ol> : <ul>{items}</ul>;
    }
    case 'table':
      return (
        <table className="help-table">
          <thead>
            <tr>
              {block.head.map((cell, index) => (
                <th key={index} scope="col">
                  <Inlines inlines={cell} from={from} />
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {block.rows.map((row, index) => (
              <tr key={index}>
                {row.map((cell, column) => (
                  <td key={column}>
                    <Inlines inlines={cell} from={from} />
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      );
  }
}

function isBlank(inline: Inline): boolean {
  return inline.kind === 'text' && inline.text.trim() === '';
}

function Inlines({ inlines, from }: { inlines: Inline[]; from: string }): ReactNode {
  return inlines.map((inline, index) => <InlineView key={index} inline={inline} from={from} />);
}

function InlineView({ inline, from }: { inline: Inline; from: string }): ReactNode {
  switch (inline.kind) {
    case 'text':
      return inline.text;
    case 'code':
      return <code className={/\s/.test(inline.text) ? undefined : 'word'}>{inline.text}</code>;
    case 'strong':
      return (
        <strong>
          <Inlines inlines={inline.children} from={from} />
        </strong>
      );
    case 'em':
      return (
        <em>
          <Inlines inlines={inline.children} from={from} />
        </em>
      );
    case 'image':
      // Images are not part of the console's own files; the pages say what they show in words.
      return null;
    case 'link': {
      const target = resolveHelpLink(inline.href, from);
      const words = <Inlines inlines={inline.children} from={from} />;
      if (target.kind === 'none') return <Fragment>{words}</Fragment>;
      return target.kind === 'external' ? (
        <a href={target.href} target="_blank" rel="noreferrer noopener">
          {words}
        </a>
      ) : (
        <a href={target.href}>{words}</a>
      );
    }
  }
}
