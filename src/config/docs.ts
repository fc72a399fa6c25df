/**
 * docs/configuration.md, written from the schema by `npm run docs:config` (tools/config-docs.ts);
 * a test fails when the file differs from what this renders.
 */
import { variablesOf } from './load.ts';
import { SECTIONS } from './schema.ts';
import type { Variable } from './variable.ts';

/** A table cell: a `|` would end it, a line break the row. */
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function row(variable: Variable<unknown>): string {
  const form = variable.secret ? `${variable.form}; **secret**` : variable.form;
  return `| \`${variable.name}\` | ${cell(form)} | ${cell(variable.defaultText || '—')} | ${cell(variable.meaning)} |`;
}

export function renderConfigurationDoc(): string {
  const lines = [
    '# Configuration',
    '',
    '<!-- Written by `npm run docs:config` from src/config/schema.ts; edit the schema, not this file. -->',
    '',
    'Gatehouse reads its configuration from environment variables at startup. A malformed value stops',
    'startup with a message naming the variable and the form it expects (exit code 2). An unset or empty',
    'variable takes its default. `GET /api/admin/settings` shows every variable below with the value the',
    'instance runs with; a **secret** is shown only as set (`*****`) or unset (`null`).',
  ];
  for (const section of SECTIONS) {
    lines.push('', `## ${section.title}`, '');
    if (section.intro) lines.push(section.intro, '');
    lines.push('| Name | Form | Default | Meaning |', '|---|---|---|---|', ...variablesOf(section.members).map(row));
  }
  return `${lines.join('\n')}\n`;
}
