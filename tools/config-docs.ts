/** Writes docs/configuration.md from the configuration schema (src/config/schema.ts). */
import fs from 'node:fs';
import { renderConfigurationDoc } from '../src/config/docs.ts';

const target = new URL('../docs/configuration.md', import.meta.url);
fs.writeFileSync(target, renderConfigurationDoc());
console.log(`wrote ${target.pathname}`);
