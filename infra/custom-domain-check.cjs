'use strict';
/**
 * Refuses to package a stage whose custom domain (infra/custom-domain.yml) is not its issuer's
 * origin, values given as --param included: discovery by issuer (RFC 8414 section 3) finds the
 * metadata only there, and the domain needs its certificate. docs/stages.md, "Issuer and discovery".
 */
class CustomDomainCheck {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'after:aws:package:finalize:mergeCustomProviderResources': () => this.check() };
  }

  check() {
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    const domain = resources.ApiDomainName?.Properties?.DomainName ?? '';
    if (domain === '') return;
    const problems = [];
    if ((resources.ApiDomainName.Properties.RegionalCertificateArn ?? '') === '')
      problems.push('it needs customDomainCertificateArn');
    const issuers = new Set(
      Object.values(resources).flatMap((resource) =>
        resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.TOKEN_ISSUER
          ? [resource.Properties.Environment.Variables.TOKEN_ISSUER]
          : [],
      ),
    );
    for (const issuer of issuers)
      if (issuer !== `https://${domain}`) problems.push(`tokenIssuer is ${issuer}, not https://${domain}`);
    if (problems.length > 0)
      throw new Error(
        `customDomainName ${domain}: ${problems.join('; ')} (docs/stages.md, "Issuer and discovery")`,
      );
  }
}

module.exports = CustomDomainCheck;
