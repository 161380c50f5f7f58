// Who may do what in which organisation (common/organizations.ts), case by
// case: site admins, the owner, an admin, a member and an outsider.
import { describe, expect, it } from 'vitest';
import {
  addMemberProblem,
  assignableRoles,
  canManageMembers,
  canViewOrganization,
  changeRoleProblem,
  removeMemberProblem,
  type OrganizationActor,
  type OrganizationRole,
} from '../../common/organizations';
import { Role } from '../../common/roles';

const actor = (membership: OrganizationRole | undefined, siteRole: number = Role.user, organizationEnabled = true): OrganizationActor => ({
  siteRole,
  userId: 1,
  membership,
  organizationEnabled,
});
const owner = actor('owner');
const admin = actor('admin');
const member = actor('member');
const outsider = actor(undefined);
const siteAdmin = actor(undefined, Role.admin);

describe('organisation access', () => {
  it('shows an organisation to its members and to site admins only', () => {
    expect([owner, admin, member, siteAdmin].map(canViewOrganization)).toEqual([true, true, true, true]);
    expect(canViewOrganization(outsider)).toBe(false);
    // a site user with a higher role but no membership is still an outsider
    expect(canViewOrganization(actor(undefined, Role.user))).toBe(false);
  });

  it('lets the owner and admins manage members, while the organisation is enabled', () => {
    expect([owner, admin, member, outsider, siteAdmin].map(canManageMembers)).toEqual([true, true, false, false, true]);
    expect(canManageMembers(actor('owner', Role.user, false))).toBe(false);
    expect(canManageMembers(actor(undefined, Role.admin, false))).toBe(true);
  });

  it('assigns only roles below the actor’s own; a site admin any, the owner included', () => {
    expect(assignableRoles(siteAdmin)).toEqual(['member', 'admin', 'owner']);
    expect(assignableRoles(owner)).toEqual(['member', 'admin']);
    expect(assignableRoles(admin)).toEqual(['member']);
    expect(assignableRoles(member)).toEqual([]);
    expect(assignableRoles(outsider)).toEqual([]);
  });

  it('adds members within those roles', () => {
    expect(addMemberProblem(owner, 'admin')).toBeUndefined();
    expect(addMemberProblem(admin, 'member')).toBeUndefined();
    expect(addMemberProblem(admin, 'admin')).toMatch(/may not make someone admin/);
    expect(addMemberProblem(owner, 'owner')).toMatch(/transferring ownership/);
    expect(addMemberProblem(member, 'member')).toMatch(/owner and its admins/);
    expect(addMemberProblem(outsider, 'member')).toMatch(/owner and its admins/);
    expect(addMemberProblem(siteAdmin, 'owner')).toBeUndefined();
  });

  it('changes roles below the actor’s own, and moves ownership only by transfer', () => {
    const target = (role: OrganizationRole, userId = 2) => ({ userId, role });
    expect(changeRoleProblem(owner, target('member'), 'admin')).toBeUndefined();
    expect(changeRoleProblem(owner, target('admin'), 'member')).toBeUndefined();
    expect(changeRoleProblem(owner, target('admin'), 'owner')).toBeUndefined();
    expect(changeRoleProblem(admin, target('member'), 'admin')).toMatch(/below your own role/);
    expect(changeRoleProblem(admin, target('admin'), 'member')).toMatch(/below your own role/);
    expect(changeRoleProblem(admin, target('member'), 'owner')).toMatch(/only the owner transfers/);
    expect(changeRoleProblem(admin, target('owner'), 'member')).toMatch(/ownership is transferred/);
    expect(changeRoleProblem(admin, target('admin', 1), 'member')).toMatch(/your own role/);
    expect(changeRoleProblem(member, target('member'), 'member')).toMatch(/owner and its admins/);
    // the site admin may demote the owner directly
    expect(changeRoleProblem(siteAdmin, target('owner'), 'member')).toBeUndefined();
    expect(changeRoleProblem(siteAdmin, target('member'), 'owner')).toBeUndefined();
  });

  it('removes members below the actor’s role; anyone but the owner may leave', () => {
    const target = (role: OrganizationRole, userId = 2) => ({ userId, role });
    expect(removeMemberProblem(owner, target('admin'))).toBeUndefined();
    expect(removeMemberProblem(admin, target('member'))).toBeUndefined();
    expect(removeMemberProblem(admin, target('admin'))).toMatch(/below your own role/);
    expect(removeMemberProblem(admin, target('owner'))).toMatch(/transfer ownership first/);
    expect(removeMemberProblem(member, target('member'))).toMatch(/owner and its admins/);
    expect(removeMemberProblem(member, target('member', 1))).toBeUndefined();
    expect(removeMemberProblem(admin, target('admin', 1))).toBeUndefined();
    expect(removeMemberProblem(owner, target('owner', 1))).toMatch(/transfer ownership first/);
    expect(removeMemberProblem(outsider, target('member'))).toMatch(/owner and its admins/);
    expect(removeMemberProblem(siteAdmin, target('owner'))).toBeUndefined();
  });
});
