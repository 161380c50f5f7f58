// The create form's "Spends": the caller's own money, or that of an
// organisation they belong to (the server checks the membership again). Shown
// only to someone in at least one enabled organisation.
import { useEffect, useState } from 'react';
import { SelectInput, useTranslate } from 'react-admin';
import { OrganizationStatus, type MyOrganizationRecord } from '../../../common/organizations';
import { dataProvider } from '../../dataProvider';

export function TokenSpendsInput() {
  const translate = useTranslate();
  const [organizations, setOrganizations] = useState<MyOrganizationRecord[]>([]);
  useEffect(() => {
    let live = true;
    dataProvider
      .myOrganizations()
      .then((mine) => {
        if (live) setOrganizations(mine.filter((organization) => organization.status === OrganizationStatus.enabled));
      })
      // without the list the form still makes personal keys
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  if (organizations.length === 0) return null;
  const choices = [
    { id: 0, name: translate('organizations.personal') },
    ...organizations.map((organization) => ({ id: organization.id, name: organization.name })),
  ];
  return (
    <SelectInput
      source="organization_id"
      label="organizations.spends"
      choices={choices}
      defaultValue={0}
      translateChoice={false}
      helperText="organizations.spends_help"
      sx={{ width: '100%', maxWidth: 560 }}
    />
  );
}
