// HTML reduced to the words a reader sees, fed chunk by chunk as the page arrives. htmlparser2 tokenizes
// (script and style as raw text, implied closes) and decodes entities through `entities`, as the HTML
// standard does; this file only says which elements are dropped and where lines break.
// Loaded by fetch_url with import(), so agent start-up never reads the parser.
import { Parser } from 'htmlparser2';
import { clipText } from '../output/cut.js';

/** Elements whose content is never text a reader sees (the title is kept apart, see `title`). */
const DROPPED = new Set(['head', 'script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'select']);

/** Elements that start and end a line of their own. */
const BLOCKS = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'summary', 'table', 'tr', 'ul',
]);

/** Characters of a title kept (then `…`): a page's title comes with every piece of it. */
export const TITLE_CHARS = 200;

/** Cells of a row stay on its line, apart. */
const CELLS = new Set(['td', 'th']);
/** What may stand in a <head>: anything else ends it, as a browser reads a page whose </head> and <body> are left out. */
const HEAD_CONTENT = new Set(['title', 'meta', 'link', 'style', 'script', 'base', 'noscript', 'template']);

export interface HtmlText {
  write: (chunk: string) => void;
  end: () => void;
  /** The text so far: whitespace collapsed to one space or one line break, except inside <pre>. */
  text: () => string;
  /** Characters of text so far (a trailing line break included): enough to know when to stop reading. */
  length: () => number;
  /** The first <title>'s text, collapsed and cut to TITLE_CHARS; '' when the page has none. */
  title: () => string;
}

/** A reducer to write a page into as it arrives; `text()` grows with each chunk. */
export function htmlText(): HtmlText {
  let out = '';
  let title: string | null = null;
  let inTitle = false;
  // The dropped elements open around the current text, innermost last.
  const dropped: string[] = [];
  let pre = 0;
  // The HTML standard drops a line break just after <pre>.
  let preOpened = false;
  // What separates the next word from the last: nothing, a space or a line break.
  let gap: '' | ' ' | '\n' = '';
  const breakLine = (): void => {
    if (out !== '') gap = '\n';
  };
  const flushGap = (): void => {
    // A <pre> that ended on its own line break needs no other.
    if (gap === ' ' || (gap === '\n' && !out.endsWith('\n'))) out += gap;
    gap = '';
  };
  const parser = new Parser(
    {
      onopentag(name) {
        if (dropped.at(-1) === 'head' && !HEAD_CONTENT.has(name)) dropped.pop();
        // The page's title is in its head; an SVG's <title> is not the page's.
        if (name === 'title' && title === null && dropped.every((element) => element === 'head')) {
          inTitle = true;
          title = '';
        } else if (DROPPED.has(name)) dropped.push(name);
        else if (name === 'pre') {
          pre += 1;
          preOpened = true;
        }
        if (BLOCKS.has(name)) breakLine();
        else if (CELLS.has(name) && gap === '' && out !== '') gap = ' ';
      },
      onclosetag(name) {
        if (name === 'title') inTitle = false;
        else if (DROPPED.has(name)) dropped.pop();
        else if (name === 'pre') pre = Math.max(0, pre - 1);
        if (BLOCKS.has(name)) breakLine();
      },
      ontext(data) {
        if (inTitle) {
          title = `${title ?? ''}${data}`;
          return;
        }
        // Words in a head end it too, as a browser reads them.
        if (dropped.at(-1) === 'head' && /[^ \t\n\r\f]/.test(data)) dropped.pop();
        if (dropped.length > 0 || data === '') return;
        if (pre > 0) {
          // Whitespace inside <pre> is the text's own (code, poems): kept, lines and all.
          const own = data.replace(/\r\n?/g, '\n');
          const kept = preOpened && own.startsWith('\n') ? own.slice(1) : own;
          preOpened = false;
          if (kept === '') return;
          flushGap();
          out += kept;
          return;
        }
        // Spaces, tabs, line breaks and no-break spaces: one gap, however many.
        data.split(/[ \t\n\r\f\u00a0]+/).forEach((word, index) => {
          if (index > 0 && gap === '' && out !== '') gap = ' ';
          if (word === '') return;
          flushGap();
          out += word;
        });
      },
    },
    { decodeEntities: true },
  );
  return {
    write: (chunk) => parser.write(chunk),
    end: () => parser.end(),
    text: () => out.trimEnd(),
    length: () => out.length,
    title: () => clipText((title ?? '').replace(/[ \t\n\r\f\u00a0]+/g, ' ').trim(), TITLE_CHARS),
  };
}
