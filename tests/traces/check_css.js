// Checks a CSS file with css-tree (Debian node-css-tree): parse errors, unknown properties and
// values that do not match their property's grammar. Usage: node check_css.js FILE.css
'use strict';
const csstree = require('css-tree');
const fs = require('fs');

const file = process.argv[2];
const problems = [];
const ast = csstree.parse(fs.readFileSync(file, 'utf8'), {
  positions: true,
  onParseError: function (e) { problems.push(e.line + ': ' + e.message); },
});
csstree.walk(ast, {
  visit: 'Declaration',
  enter: function (node) {
    const match = csstree.lexer.matchDeclaration(node);
    if (match.error) problems.push(node.loc.start.line + ': ' + node.property + ': ' + match.error.message.split('\n')[0]);
  },
});
for (const p of problems) console.error(file + ':' + p);
process.exit(problems.length ? 1 : 0);
