// The html`` template every page is written with (api/http/html.ts): each interpolated value is
// escaped unless it is already Html, so hostile text can neither open a tag nor leave an attribute.
import test from 'ava';
import { Html, html, scriptValue, trustedHtml } from '../api/http/html.ts';

const HOSTILE = `<script>alert("x")</script> & 'quoted'`;
const ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;';

test('text is escaped in elements and in quoted attributes', (t) => {
  t.is(html`<td>${HOSTILE}</td>`.text, `<td>${ESCAPED}</td>`);
  const link = html`<a href="/p?q=${'x" onmouseover="alert(1)'}" title='${"it's"}'>`.text;
  t.is(link, '<a href="/p?q=x&quot; onmouseover=&quot;alert(1)" title=\'it&#39;s\'>');
  t.false(link.includes('" onmouseover'), 'a double quote cannot end the attribute');
});

test('a nested template is kept as markup, once: its values were escaped when it was made', (t) => {
  const inner = html`<b>${HOSTILE}</b>`;
  t.true(inner instanceof Html);
  t.is(html`<p>${inner}</p>`.text, `<p><b>${ESCAPED}</b></p>`);
  t.is(html`${html`${html`${'&'}`}`}`.text, '&amp;', 'never escaped twice');
});

test('arrays are joined without separators, each item escaped or kept as markup', (t) => {
  const rows = ['<a>', 'b&c'].map((v) => html`<li>${v}</li>`);
  t.is(html`<ul>${rows}</ul>`.text, '<ul><li>&lt;a&gt;</li><li>b&amp;c</li></ul>');
  t.is(html`${['<i>', trustedHtml('<br>'), [1, ['<']]]}`.text, '&lt;i&gt;<br>1&lt;');
  t.is(html`<ul>${[]}</ul>`.text, '<ul></ul>');
});

test('numbers are written as text; null, undefined and false leave nothing; other values become text', (t) => {
  t.is(html`${0} ${-1.5} ${1e21} ${NaN}`.text, '0 -1.5 1e+21 NaN');
  t.is(html`[${null}|${undefined}|${false}]`.text, '[||]');
  t.is(html`${true} ${''}`.text, 'true ');
  const show = (error?: string) => html`<form>${error && html`<p class="error">${error}</p>`}</form>`.text;
  t.is(show(), '<form></form>', 'a condition && a template reads naturally');
  t.is(show('<bad>'), '<form><p class="error">&lt;bad&gt;</p></form>');
  t.is(html`${{ toString: () => '<obj>' }}`.text, '&lt;obj&gt;');
});

test('only code marks text as markup; a value for a script cannot close the script element', (t) => {
  t.is(html`<style>${trustedHtml('a>b{color:red}')}</style>`.text, '<style>a>b{color:red}</style>');
  t.is(html`${new Html('<hr>')}`.toString(), '<hr>');
  const script = html`<script>const s = ${scriptValue('</script><script>alert(1)</script>')};</script>`.text;
  t.is(script.match(/<\/script>/g)?.length, 1, 'one closing tag: the template\'s own');
  t.is(JSON.parse(script.slice('<script>const s = '.length, -';</script>'.length)), '</script><script>alert(1)</script>', 'the value is intact for the script');
});
