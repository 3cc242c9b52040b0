/**
 * esbuild plugins for serverless-esbuild, which builds every function on its own (one entry
 * point per build), so a plugin can treat one function differently from the rest.
 *
 * The authorizer runs in front of every protected request, and its artifact is what its cold
 * start loads: it takes the AWS SDK from the nodejs24.x runtime, which ships SDK v3, instead
 * of bundling ~500 KB of it. Every other function bundles the SDK at the version
 * package-lock.json pins. docs/PERFORMANCE.md measures both choices (sizes, cold start).
 */
'use strict';

/** Entry points whose `@aws-sdk/*` imports are left to the Lambda runtime. */
const RUNTIME_SDK = [/(^|\/)functions\/authorizer\.ts$/];

const entries = (entryPoints) =>
  (Array.isArray(entryPoints) ? entryPoints : Object.values(entryPoints ?? {})).map((entry) =>
    typeof entry === 'string' ? entry : entry.in,
  );

module.exports = [
  {
    name: 'runtime-aws-sdk',
    setup(build) {
      const usesRuntimeSdk = entries(build.initialOptions.entryPoints).some((entry) =>
        RUNTIME_SDK.some((pattern) => pattern.test(entry.replaceAll('\\', '/'))),
      );
      if (!usesRuntimeSdk) return;
      build.onResolve({ filter: /^@aws-sdk\// }, (args) => ({ path: args.path, external: true }));
    },
  },
];
