'use strict';
/**
 * Makes the resources that attach to the API Gateway stage wait for the stage.
 *
 * serverless creates the stage through the API's Deployment (its StageName) and names that
 * Deployment anew on every deploy, so a `resources:` entry cannot name it in DependsOn. On a
 * stage's first deploy CloudFormation could then create the web ACL association
 * (infra/waf.yml) or the custom domain's base path mapping (infra/custom-domain.yml) before
 * the stage exists, and fail. This hook adds the Deployment to the DependsOn of each once the
 * `resources:` have been merged into the template.
 */
const ATTACHED_TO_STAGE = new Set(['AWS::WAFv2::WebACLAssociation', 'AWS::ApiGateway::BasePathMapping']);

class StageDependents {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'after:aws:package:finalize:mergeCustomProviderResources': () => this.apply() };
  }

  apply() {
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    const deployments = Object.keys(resources).filter(
      (id) => resources[id].Type === 'AWS::ApiGateway::Deployment',
    );
    const attached = Object.values(resources).filter((resource) => ATTACHED_TO_STAGE.has(resource.Type));
    if (attached.length === 0) return;
    if (deployments.length !== 1) {
      throw new Error(`expected one API Gateway deployment, found ${deployments.length}`);
    }
    for (const resource of attached) {
      const dependsOn = resource.DependsOn === undefined ? [] : [resource.DependsOn].flat();
      resource.DependsOn = [...new Set([...dependsOn, deployments[0]])];
    }
  }
}

module.exports = StageDependents;
