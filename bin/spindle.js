#!/usr/bin/env node
// Spindle ships TypeScript sources; tsx compiles them on the fly (cached), so there is no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
