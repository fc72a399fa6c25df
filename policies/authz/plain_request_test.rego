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
