// Writes packages/server/openapi.json from the per-module descriptions (npm run openapi).
import { writeFileSync } from 'node:fs';
import { openApiJson } from '../src/openapi/document.js';

writeFileSync(new URL('../openapi.json', import.meta.url), openApiJson());
console.log('wrote packages/server/openapi.json');
