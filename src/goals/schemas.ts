import * as v from 'valibot';
import { FUNNEL_STEP_TYPES, GOAL_TYPES } from './store.js';

const NAME_MESSAGE = 'name is required (1–80 characters)';
const Name = v.pipe(v.string(NAME_MESSAGE), v.trim(), v.minLength(1, NAME_MESSAGE), v.maxLength(80, NAME_MESSAGE));
const VALUE_MAX = 500;

/** Types whose `value` names something that must exist: an event, a path, a transaction. */
const NEEDS_VALUE: readonly string[] = ['event', 'pageview', 'revenue'];

export const CreateGoalBody = v.pipe(
  v.object(
    {
      name: Name,
      type: v.picklist(GOAL_TYPES, `type must be one of: ${GOAL_TYPES.join(', ')}`),
      value: v.optional(
        v.pipe(v.string('value must be a string'), v.trim(), v.maxLength(VALUE_MAX, `value must be at most ${VALUE_MAX} characters`)),
        '',
      ),
      target: v.optional(
        v.nullable(v.pipe(v.number('target must be a number ≥ 0 or null'), v.finite('target must be a number ≥ 0 or null'), v.minValue(0, 'target must be a number ≥ 0 or null'))),
        null,
      ),
    },
    'Body must be a JSON object with name (1–80 characters), type and value',
  ),
  v.check((g) => !NEEDS_VALUE.includes(g.type) || g.value.length > 0, 'value is required for event, pageview and revenue goals'),
  v.check((g) => g.type !== 'engagement' || g.value === '', "value must be '' for engagement goals"),
);

const StepsMessage = 'steps must be an array of 2 to 8 steps';
const Step = v.object(
  {
    type: v.picklist(FUNNEL_STEP_TYPES, `step type must be one of: ${FUNNEL_STEP_TYPES.join(', ')}`),
    value: v.pipe(
      v.string('step value is required'),
      v.trim(),
      v.minLength(1, 'step value is required'),
      v.maxLength(VALUE_MAX, `step value must be at most ${VALUE_MAX} characters`),
    ),
  },
  'each step must be an object with type and value',
);

export const CreateFunnelBody = v.object(
  {
    name: Name,
    steps: v.pipe(v.array(Step, StepsMessage), v.minLength(2, StepsMessage), v.maxLength(8, StepsMessage)),
  },
  'Body must be a JSON object with name (1–80 characters) and steps',
);

export const GoalSchema = v.object({
  id: v.string(),
  name: v.string(),
  type: v.picklist(GOAL_TYPES),
  value: v.string(),
  target: v.nullable(v.number()),
  createdAt: v.pipe(v.string(), v.isoTimestamp()),
});

export const FunnelStepSchema = v.object({ type: v.picklist(FUNNEL_STEP_TYPES), value: v.string() });
export const FunnelSchema = v.object({
  id: v.string(),
  name: v.string(),
  steps: v.array(FunnelStepSchema),
  createdAt: v.pipe(v.string(), v.isoTimestamp()),
});
export const FunnelList = v.object({ funnels: v.array(FunnelSchema) });
export const OkResult = v.object({ ok: v.boolean() });
