// The bounce rules live in shared/ (the inbound bounce reader classifies with the same table).
export * from '../../shared/bounces/rules.ts';
