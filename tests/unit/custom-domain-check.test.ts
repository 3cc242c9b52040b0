/** The packaging check of infra/custom-domain-check.cjs, on templates as serverless compiles them. */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

const CustomDomainCheck = createRequire(import.meta.url)('../../infra/custom-domain-check.cjs') as new (
  serverless: unknown,
) => { check(): void };

const CERTIFICATE = 'arn:aws:acm:eu-central-1:123456789012:certificate/1234abcd-12ab-34cd-56ef-1234567890ab';

/** The check on a template with the custom domain `domain` and functions with these issuers. */
const checked = (domain: string, certificate: string, issuers: readonly string[]) => () =>
  new CustomDomainCheck({
    service: {
      provider: {
        compiledCloudFormationTemplate: {
          Resources: {
            ApiDomainName: {
              Type: 'AWS::ApiGateway::DomainName',
              Properties: { DomainName: domain, RegionalCertificateArn: certificate },
            },
            ...Object.fromEntries(
              issuers.map((issuer, index) => [
                `Function${index}`,
                {
                  Type: 'AWS::Lambda::Function',
                  Properties: { Environment: { Variables: { TOKEN_ISSUER: issuer } } },
                },
              ]),
            ),
            Jwks: { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: {} } } },
          },
        },
      },
    },
  }).check();

describe('packaging a stage with a custom domain', () => {
  it('goes on when every function’s issuer is the domain’s origin', () => {
    expect(
      checked('auth.parcel-carrier.example', CERTIFICATE, ['https://auth.parcel-carrier.example']),
    ).not.toThrow();
  });

  it('goes on for a stage without a custom domain, whatever its issuer', () => {
    expect(checked('', '', ['https://auth.parcel-carrier.example/dev'])).not.toThrow();
  });

  it('stops when the issuer is another URL, such as the stage identifier it had', () => {
    expect(
      checked('auth.parcel-carrier.example', CERTIFICATE, [
        'https://auth.parcel-carrier.example/prod',
        'https://auth.parcel-carrier.example/prod',
      ]),
    ).toThrow(
      'customDomainName auth.parcel-carrier.example: tokenIssuer is https://auth.parcel-carrier.example/prod, not https://auth.parcel-carrier.example',
    );
  });

  it('stops when the domain has no certificate', () => {
    expect(checked('auth.parcel-carrier.example', '', ['https://auth.parcel-carrier.example'])).toThrow(
      'it needs customDomainCertificateArn',
    );
  });
});
