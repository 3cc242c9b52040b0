'use strict';
/**
 * Sets API Gateway stage throttling (rate and burst, for every method of the stage) from
 * `custom.stageThrottling`, which serverless.yml takes from the stage parameters.
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
    deployments[0].Properties.StageDescription = {
      ...deployments[0].Properties.StageDescription,
      ThrottlingRateLimit: rate,
      ThrottlingBurstLimit: burst,
    };
  }
}

module.exports = StageThrottling;
