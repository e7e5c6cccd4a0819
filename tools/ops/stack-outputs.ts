/**
 * Reads a deployed notifier stack's outputs (CloudFormation DescribeStacks) into a typed record, so operator tools
 * never hunt for generated names. Fails with a message naming what is missing: a stack deployed before an output
 * existed needs a `cdk deploy` first.
 */
import {
  type CloudFormationClient,
  DescribeStacksCommand,
  type DescribeStacksCommandOutput,
} from '@aws-sdk/client-cloudformation';
import {
  OPTIONAL_STACK_OUTPUT_NAMES,
  STACK_OUTPUT_NAMES,
  type StackOutputName,
  type StackOutputs,
} from '../../lib/stack-outputs.ts';

export class StackOutputsError extends Error {
  override name = 'StackOutputsError';
}

/** A deployed stack's outputs by name, with its status; a stack that does not exist is a StackOutputsError. */
export async function stackOutputValues(
  cloudFormation: CloudFormationClient,
  stackName: string,
): Promise<{ readonly status: string; readonly values: ReadonlyMap<string, string> }> {
  let answer: DescribeStacksCommandOutput;
  try {
    answer = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
  } catch (error) {
    // DescribeStacks answers a missing stack with a ValidationError ("Stack with id X does not exist").
    if ((error as Error).name === 'ValidationError') {
      throw new StackOutputsError(`stack "${stackName}" not found: ${(error as Error).message}`);
    }
    throw error;
  }
  const stack = answer.Stacks?.[0];
  if (stack === undefined) throw new StackOutputsError(`stack "${stackName}" not found`);
  const values = new Map<string, string>();
  for (const o of stack.Outputs ?? []) if (o.OutputKey && o.OutputValue) values.set(o.OutputKey, o.OutputValue);
  return { status: stack.StackStatus ?? 'status unknown', values };
}

export async function readStackOutputs(
  cloudFormation: CloudFormationClient,
  stackName: string,
  required: readonly StackOutputName[] = STACK_OUTPUT_NAMES,
): Promise<StackOutputs> {
  const { status, values } = await stackOutputValues(cloudFormation, stackName);
  const missing = required.filter((name) => !values.get(name));
  if (missing.length > 0) {
    throw new StackOutputsError(
      `stack "${stackName}" (${status}) lacks the outputs ${missing.join(', ')}: deploy the current version first`,
    );
  }
  const optional = OPTIONAL_STACK_OUTPUT_NAMES.flatMap((name) => {
    const value = values.get(name);
    return value ? [[name, value]] : [];
  });
  return Object.fromEntries([
    ...STACK_OUTPUT_NAMES.map((name) => [name, values.get(name) ?? '']),
    ...optional,
  ]) as StackOutputs;
}
