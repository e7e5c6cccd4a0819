/** The operator's commands for two regions (docs/regions.md "Promotion and demotion, step by step"). */
export {
  type Clock,
  type DemoteRequest,
  type DemotionReport,
  demote,
  type FailoverRequest,
  type PromotionReport,
  promoteFailover,
  type RegionSide,
} from './promote.ts';
export { ReconcileRefused, type ReconcileReport, type ReconcileRequest, reconcile } from './reconcile.ts';
