#!/usr/bin/env node
// `npx paygate-bank`: the reference bank (SEPA over SFTP). Runs the build, or from a checkout
// without a build the TypeScript sources through tsx (@paygate/simulator-kit/launch.js).
import { launch } from '@paygate/simulator-kit/launch';

await launch(import.meta.url);
