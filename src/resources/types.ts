import type { ComponentType } from 'react';
import type { ResourceProps } from 'react-admin';

/** Sees the entry from this role up (admin 10, root 100); no role: everyone. */
export interface MenuEntry {
  label: string;
  role?: number;
}

/**
 * One console resource, as its folder's index.ts exports it. `paths` keeps
 * one-api's form URLs (/channel/add, /channel/edit/:id), which react-admin's
 * own create/edit routes (/channel/create, /channel/:id) cannot give; without
 * it, create and edit are react-admin's.
 */
export interface ResourceDefinition {
  name: string;
  list: ComponentType;
  create?: ComponentType;
  edit?: ComponentType;
  show?: ComponentType;
  icon: ComponentType;
  recordRepresentation?: ResourceProps['recordRepresentation'];
  /** No entry: reached from another screen only. */
  menu?: MenuEntry;
  paths?: { create?: string; edit?: string };
  /** Served in ra-data-simple-rest's convention (resources one-api never had), so it needs no data-provider code. */
  simpleRest?: boolean;
}
