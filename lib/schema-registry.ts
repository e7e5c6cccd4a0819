/**
 * The schema registry ingest reads writer schemas from (settings `schemaRegistry`): its address in ingest's
 * environment (functions/ingest/schema-registry.ts reads it at cold start) and the least IAM that lets ingest read
 * schemas — nothing to register, change or delete. The MSK mapping itself gets no SchemaRegistryConfig: records are
 * decoded in the function, so an unreadable one is quarantined like any bad input (docs/design-choices.md "Avro and
 * Protobuf decoded in the function").
 */
import { Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, type Role } from 'aws-cdk-lib/aws-iam';
import type { IngestEnvironment } from '../functions/contracts/environment.ts';
import type { NotifierFunction } from './notifier-function.ts';
import { ARN_GLUE_REGISTRY, type Settings } from './settings.ts';

/** The registry's address in ingest's environment (none: no variable, and registry-framed records are quarantined). */
export function schemaRegistryEnvironment(registry: Settings['schemaRegistry']) {
  if (registry === undefined) return {};
  if (registry.kind === 'glue') return { SCHEMA_REGISTRY_KIND: registry.kind } satisfies Partial<IngestEnvironment>;
  return {
    SCHEMA_REGISTRY_KIND: registry.kind,
    SCHEMA_REGISTRY_URL: registry.url,
    ...(registry.basicAuthSecretArn === undefined ? {} : { SCHEMA_REGISTRY_SECRET_ARN: registry.basicAuthSecretArn }),
  } satisfies Partial<IngestEnvironment>;
}

/** What ingest's role may do with the registry: read schemas, nothing else. */
export function useSchemaRegistry(ingest: NotifierFunction, registry: Settings['schemaRegistry']): void {
  if (registry === undefined) return;
  if (registry.kind === 'glue') {
    const [, partition, region, account, name] = ARN_GLUE_REGISTRY.exec(registry.registryArn) ?? [];
    // GetSchemaVersion by SchemaVersionId is authorized against the registry and its schemas.
    const schemas = `arn:${partition}:glue:${region}:${account}:schema/${name}/*`;
    ingest.addToRolePolicy(
      new PolicyStatement({ actions: ['glue:GetSchemaVersion'], resources: [registry.registryArn, schemas] }),
    );
    Validations.of(ingest.role as Role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${schemas}]`,
      reason:
        "Read-only GetSchemaVersion on the schemas of the bank's one registry: producers register new ones at any time.",
    });
    return;
  }
  if (registry.basicAuthSecretArn === undefined) return;
  ingest.addToRolePolicy(
    new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [registry.basicAuthSecretArn] }),
  );
  if (registry.basicAuthKmsKeyArn !== undefined) {
    ingest.addToRolePolicy(
      new PolicyStatement({
        actions: ['kms:Decrypt'],
        resources: [registry.basicAuthKmsKeyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(ingest).region}.amazonaws.com` } },
      }),
    );
  }
}
