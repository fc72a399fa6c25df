package authz_test

import data.authz

# request, user and dashboard come from decision_test.rego
# A plain request (subject, org_id, action, perhaps resource) skips the checks of the fields only
# some requests carry; the same request carrying such a field that changes nothing, or an unknown
# one, is decided the long way, and both must give the same refusal.
test_a_plain_deny_is_the_long_way_deny if {
	plain := request(user("u_viewer"), "dashboards:write", dashboard("d_deep"))
	authz._is_plain with input as plain
	not authz._is_plain with input as object.union(plain, {"requires": []})
	not authz._is_plain with input as object.union(plain, {"note": 1})
	_decide(plain) == _decide(object.union(plain, {"requires": []}))
	_decide(plain) == _decide(object.union(plain, {"note": 1}))
}

test_plain_is_counted_with_and_without_a_resource if {
	authz._is_plain with input as {"subject": user("u_viewer"), "org_id": "org_main", "action": "dashboards:create"}
	authz._is_plain with input as {"subject": user("u_viewer"), "org_id": null, "action": "orgs:create"}
	not authz._is_plain with input as {"subject": user("u_viewer"), "action": "dashboards:read", "resource": dashboard("d_deep"), "chat": {}}
	not authz._is_plain with input as {"subject": user("u_viewer"), "org_id": "org_main", "chat": {}}
}

# A plain deny names the missing grant alone only when it is the one denial: a server-only action
# adds its refusal, and an inactive subject or a resource of no known shape has no grant to name.
test_a_plain_deny_names_every_denial if {
	_decide({"subject": user("u_viewer"), "org_id": "org_main", "action": "orgs:create"}).reasons == [
		{"kind": "missing", "action": "orgs:create"},
		{"kind": "server-only", "action": "orgs:create"},
	]
	disabled := object.union(user("u_viewer"), {"disabled": true})
	_decide(request(disabled, "dashboards:write", dashboard("d_deep"))).reasons == [{"kind": "subject", "problem": "disabled"}]
	unknown_kind := {"kind": "input", "field": "resource", "resourceKind": "nope"}
	_decide(request(user("u_viewer"), "dashboards:write", {"kind": "nope", "uid": "x"})).reasons == [unknown_kind]
	authz._denied_for_grant_alone with input as request(user("u_viewer"), "dashboards:write", dashboard("d_deep"))
		with data.members as org.members
		with data.builtin_roles as org.builtin_roles
		with data.roles as org.roles
		with data.folders as org.folders
		with data.dashboards as org.dashboards
		with data.org_id as org.org_id
}
