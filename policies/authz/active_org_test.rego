package authz_test

import data.authz

test_the_active_org_entry_point_needs_no_data_document if {
	req := {"subject": user("u_viewer"), "org_id": "org_main", "org": {"is_member": true}}
	accepted := {"allow": true, "reasons": [{"kind": "active-org", "via": "membership", "org": "org_main"}]}
	authz.active_org == accepted with input as object.union(req, {"subject": {"pinned_org": null}})
}
