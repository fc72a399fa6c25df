package authz.setup_test

import data.authz.setup

_request(action, org_id, open) := {"subject": {"id": "", "kind": "anonymous"}, "org_id": org_id, "action": action, "setup": {"open": open}}

test_the_open_wizard_grants_settings_write_at_server_level if {
	req := _request("settings:write", null, true)
	setup.grants("settings:write") == [{"kind": "rule", "rule": "setup-open", "action": "settings:write"}] with input as req
	setup.opens("settings:write") with input as req
}

test_the_open_wizard_grants_nothing_else if {
	setup.grants("settings:read") == [] with input as _request("settings:read", null, true)
	not setup.opens("settings:write") with input as _request("settings:write", "org_main", true)
	not setup.opens("settings:write") with input as _request("settings:write", null, false)
	not setup.opens("settings:write") with input as _request("settings:write", null, "true")
	not setup.opens("settings:write") with input as {"subject": {"kind": "anonymous"}, "org_id": null, "action": "settings:write"}
}

test_the_closed_wizard_tells_only_a_caller_who_has_not_signed_in if {
	setup.refuses_anonymous(_request("settings:write", null, false))
	not setup.refuses_anonymous(_request("settings:write", null, true))
	not setup.refuses_anonymous(_request("settings:read", null, false))
	not setup.refuses_anonymous(object.union(_request("settings:write", null, false), {"subject": {"id": "u1", "kind": "user"}}))
}
