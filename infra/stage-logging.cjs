'use strict';
/**
 * Access logs and X-Ray tracing of the API Gateway stage, in the template itself.
 *
 * The framework's own `provider.logs.restApi` and `provider.tracing.apiGateway` are applied
 * with SDK calls after the stack deploys (osls lib/.../api-gateway/lib/hack/update-stage.js),
 * outside CloudFormation, where no template test sees them and no stack update undoes them;
 * its access logs also bring a custom resource that sets the account's API Gateway role.
 * The stage is created by the framework's Deployment resource, whose name changes on every
 * deploy, so `resources:` cannot reach it either. Like infra/stage-throttling.cjs, this hook
 * adds to that Deployment's `StageDescription` once the framework has compiled it:
 * - `AccessLogSetting`: one JSON line per request to the log group `ApiAccessLogGroup`
 *   (infra/api-logs.yml: the stage's retention, the stage's KMS key), with the request id,
 *   the caller's address, the route (never the concrete path: it may hold a parcel number),
 *   status, latencies and the authorizer's principal (a username, or client:<id>). API Gateway's access
 *   log has no variable for request headers or bodies: the Authorization header, a token or
 *   a password cannot reach it.
 * - `TracingEnabled`: `custom.stageLogging.tracing` (the stage parameter `tracing`).
 *
 * API Gateway writes access logs with the account's CloudWatch role (one per account and
 * region, `aws apigateway update-account`): SECURITY.md "Access logs and tracing". serverless-offline
 * does not emulate either setting.
 */

/** `$context` variables of a REST API stage, one JSON object per request. */
const ACCESS_LOG_FORMAT = JSON.stringify({
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTimeEpoch',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  status: '$context.status',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  responseLength: '$context.responseLength',
  errorType: '$context.error.responseType',
  principalId: '$context.authorizer.principalId',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
  xrayTraceId: '$context.xrayTraceId',
});

const LOG_GROUP = 'ApiAccessLogGroup';

class StageLogging {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = { 'after:package:compileEvents': () => this.apply() };
  }

  apply() {
    const tracing = this.serverless.service.custom?.stageLogging?.tracing;
    if (typeof tracing !== 'boolean') throw new Error('custom.stageLogging.tracing must be true or false');
    const template = this.serverless.service.provider.compiledCloudFormationTemplate;
    const deployments = Object.values(template.Resources).filter(
      (r) => r.Type === 'AWS::ApiGateway::Deployment',
    );
    if (deployments.length !== 1)
      throw new Error(`expected one API Gateway deployment, found ${deployments.length}`);
    deployments[0].Properties.StageDescription = {
      ...deployments[0].Properties.StageDescription,
      AccessLogSetting: { DestinationArn: { 'Fn::GetAtt': [LOG_GROUP, 'Arn'] }, Format: ACCESS_LOG_FORMAT },
      TracingEnabled: tracing,
    };
  }
}

module.exports = StageLogging;
