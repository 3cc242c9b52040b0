'use strict';
/**
 * Sets API Gateway stage throttling from `custom.stageThrottling`, which serverless.yml takes
 * from the stage parameters: a rate and burst for the whole stage, and lower ones for the
 * public login routes (`loginRoutes`), so a login flood is refused before it crowds out the
 * integrators' API calls.
 *
 * The framework has no setting for a REST API stage's own throttling (its usage plans
 * throttle API keys only), and it names the Deployment resource anew on every deploy, so
 * a `resources:` entry cannot reach it. This hook adds `StageDescription` to that
 * Deployment after the framework has compiled it: CloudFormation then applies the limits
 * to the stage it creates or updates. serverless-offline does not emulate them.
 */
class StageThrottling {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'after:package:compileEvents': () => this.apply() };
  }

  apply() {
    const settings = this.serverless.service.custom?.stageThrottling;
    const rate = Number(settings?.rateLimit);
    const burst = Number(settings?.burstLimit);
    if (!Number.isFinite(rate) || !Number.isInteger(burst) || rate <= 0 || burst <= 0) {
      throw new Error('custom.stageThrottling needs a positive rateLimit and a positive whole burstLimit');
    }
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    const deployments = Object.values(resources).filter((r) => r.Type === 'AWS::ApiGateway::Deployment');
    if (deployments.length !== 1)
      throw new Error(`expected one API Gateway deployment, found ${deployments.length}`);
    const login = settings.loginRoutes ?? {};
    const loginRate = Number(login.rateLimit);
    const loginBurst = Number(login.burstLimit);
    const paths = login.paths ?? [];
    if (!Number.isFinite(loginRate) || !Number.isInteger(loginBurst) || loginRate <= 0 || loginBurst <= 0) {
      throw new Error(
        'custom.stageThrottling.loginRoutes needs a positive rateLimit and a positive whole burstLimit',
      );
    }
    deployments[0].Properties.StageDescription = {
      ...deployments[0].Properties.StageDescription,
      ThrottlingRateLimit: rate,
      ThrottlingBurstLimit: burst,
      // A method setting names its resource path with every "/" written as "~1".
      MethodSettings: paths.map((path) => ({
        ResourcePath: `/${path}`.replaceAll('/', '~1'),
        HttpMethod: 'POST',
        ThrottlingRateLimit: loginRate,
        ThrottlingBurstLimit: loginBurst,
      })),
    };
  }
}

module.exports = StageThrottling;
