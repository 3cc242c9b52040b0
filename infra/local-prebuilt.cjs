'use strict';
/**
 * Lets a local stack serve bundles another one built: with LOCAL_PREBUILT_BUNDLES=1 on the local
 * stage, serverless-esbuild bundles no function and serverless-offline serves what its work folder
 * (ESBUILD_WORK_FOLDER) already holds. The end-to-end tests build once per run and start every
 * stack so (tests/support/e2e-bundles.ts); `npm start` and every other stage always bundle.
 */
const { existsSync } = require('node:fs');
const { join } = require('node:path');

class LocalPrebuilt {
  constructor(serverless, options) {
    this.serverless = serverless;
    this.options = options;
    this.hooks = { initialize: () => this.skipBundling() };
  }

  skipBundling() {
    if (process.env.LOCAL_PREBUILT_BUNDLES !== '1') return;
    const { service } = this.serverless;
    const stage = this.options.stage ?? service.provider.stage;
    if (stage !== 'local') throw new Error(`LOCAL_PREBUILT_BUNDLES is for the local stage, not ${stage}`);
    const build = join(this.serverless.serviceDir, service.custom.esbuild.outputWorkFolder, '.build');
    for (const [name, fn] of Object.entries(service.functions)) {
      const bundle = join(build, `${fn.handler.slice(0, fn.handler.lastIndexOf('.'))}.mjs`);
      if (!existsSync(bundle)) throw new Error(`LOCAL_PREBUILT_BUNDLES: ${name} has no bundle at ${bundle}`);
      fn.skipEsbuild = true;
      // Its files are there too: copied again, a file another stack serves would be rewritten under it.
      if (fn.package?.patterns) fn.package.patterns = [];
    }
    if (service.package?.patterns) service.package.patterns = [];
  }
}

module.exports = LocalPrebuilt;
