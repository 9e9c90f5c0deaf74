#!/usr/bin/env node
// `npx paygate-psp`: the channel simulator. Runs the build, or from a checkout without a build
// the TypeScript sources through tsx (@paygate/simulator-kit/launch.js).
import { launch } from '@paygate/simulator-kit/launch';

await launch(import.meta.url);
