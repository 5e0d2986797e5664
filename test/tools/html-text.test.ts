import { describe, expect, it } from 'vitest';
import { htmlText } from '../../src/tools/html-text.js';

/** The text of a whole HTML page at once. */
function htmlToText(html: string): string {
  const reducer = htmlText();
  reducer.write(html);
  reducer.end();
  return reducer.text();
}

describe('htmlToText', () => {
  it.each([
    // What is dropped
    ['head, style and script', '<html><head><title>T</title><style>p{color:red}</style><script>var a = 1;</script></head><body><p>words</p></body></html>', 'words'],
    ['a script holding markup and a closing tag in a string', '<p>a</p><script>document.write("<p>no</p>"); var s = "</div>";</script><p>b</p>', 'a\nb'],
    ['a script before the text', '<script>if (a < b && c > d) {}</script>after', 'after'],
    ['noscript, template, svg (and its title), iframe, select', '<noscript>enable JS</noscript><template><p>t</p></template><svg><title>icon</title><text>s</text></svg><iframe>f</iframe><select><option>o</option></select>kept', 'kept'],
    ['a head left open until <body>', '<head><title>T</title><meta charset="utf-8"><body>text', 'text'],
    ['a head never closed, and no <body>: the first other tag ends it', '<html><head><title>T</title><meta charset=utf-8><script>x</script><p>Hello</p>', 'Hello'],
    ['words in a head end it', '<head><title>T</title>\n  Hello <b>there</b>', 'Hello there'],
    ['a head never closed, text straight after it', '<head><title>T</title><link rel=x><div>a<style>s</style>b</div>', 'ab'],
    ['comments and a doctype', '<!DOCTYPE html><!-- a <p>comment</p> -->x<!---->y', 'xy'],
    ['attributes, even with > in their value', '<a href="/x" title="a > b">link</a>', 'link'],
    ['an unclosed tag at the end', 'text<a href="', 'text'],
    // Entities
    ['the five common named ones', '&lt;a&gt; &amp; &quot;q&quot; &#39;s&apos;', '<a> & "q" \'s\''],
    ['named ones beyond the five', '&copy; &eacute;t&eacute; &hellip; &mdash; &euro; &rarr; &NotEqualTilde;', '© été … — € → ≂̸'],
    ['numeric, decimal and hex', '&#65;&#x42;&#X43;&#0068;', 'ABCD'],
    ['numeric astral (outside the BMP)', '&#128512; &#x1F600; &#x1d11e;', '😀 😀 𝄞'],
    ['invalid code points as U+FFFD, as the standard says', '&#0;&#xD800;&#x110000;', '\uFFFD\uFFFD\uFFFD'],
    ['Windows-1252 numerics as the standard maps them', '&#128;&#150;', '€–'],
    ['&amp;lt; decoded once only', '&amp;lt;p&amp;gt; &amp;amp;', '&lt;p&gt; &amp;'],
    ['legacy names without a semicolon', '&copy 2024 &amp more', '© 2024 & more'],
    ['an unknown name and a bare ampersand stay', '&nosuch; AT&T a & b', '&nosuch; AT&T a & b'],
    ['&nbsp; as a space', 'a&nbsp;b&nbsp;&nbsp; c', 'a b c'],
    ['entities in the text of a block, not markup', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>', '<script>alert(1)</script>'],
    // Whitespace
    ['runs of spaces, tabs and line breaks as one space', '  a \n\t b  \r\n c  ', 'a b c'],
    ['blocks on their own lines, no blank ones', '<h1>T</h1>\n\n<p>a</p>\n\n<div><p>b</p></div><ul><li>c<li>d</ul>', 'T\na\nb\nc\nd'],
    ['<br> as a line break', 'a<br>b<br/>c', 'a\nb\nc'],
    ['inline elements join without a space', 'a<b>b</b><i>c</i> <em>d</em>', 'abc d'],
    ['table cells apart, rows on lines', '<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>', 'k v\na 1'],
    ['<pre> kept as it is, less its first line break', '<p>code:</p><pre>\n  if (x) {\n    y();\n  }\n</pre><p>after</p>', 'code:\n  if (x) {\n    y();\n  }\nafter'],
    ['an empty page', '', ''],
    ['only markup', '<html><head></head><body><div></div></body></html>', ''],
  ])('%s', (_name, html, text) => {
    expect(htmlToText(html)).toBe(text);
  });

  it('a page whose text starts after 100 KB of script', () => {
    const html = `<html><head><script>${'var x = "<p>no</p>";\n'.repeat(5000)}</script></head><body><p>the text</p></body></html>`;
    expect(html.length).toBeGreaterThan(100 * 1024);
    expect(htmlToText(html)).toBe('the text');
  });

  it.each([1, 2, 3, 7, 64])('the same text written %i characters at a time (tags and entities split across chunks)', (size) => {
    const html = '<head><title>A &amp; B</title><script>x("</p>")</script></head><p>caf&eacute; &#x1F600; &amp;lt;</p><pre>\n a\n  b</pre><p>T&ocirc;t</p>';
    const reducer = htmlText();
    for (let at = 0; at < html.length; at += size) reducer.write(html.slice(at, at + size));
    reducer.end();
    expect(reducer.text()).toBe('café 😀 &lt;\n a\n  b\nTôt');
    expect(reducer.title()).toBe('A & B');
  });

  it.each([
    ['the first <title>, collapsed', '<head><title>\n  A   page\n</title></head><title>second</title>', 'A page'],
    ["an SVG's title is not the page's", '<body><svg><title>icon</title></svg><p>x</p>', ''],
    ['none', '<p>x</p>', ''],
    ['a long one, cut', `<title>${'T'.repeat(20_000)}</title>`, `${'T'.repeat(200)}…`],
    ['a long one, cut after collapsing', `<title>${'a  \n '.repeat(150)}</title>`, `${'a '.repeat(100)}…`],
  ])('title: %s', (_name, html, title) => {
    const reducer = htmlText();
    reducer.write(html);
    reducer.end();
    expect(reducer.title()).toBe(title);
  });
});
