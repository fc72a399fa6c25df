package authz.server_test

import data.authz.server

_refusal(subject, action) := refusal if {
	refusal := server.refusal with input as {"subject": subject, "org_id": "org_main", "action": action}
}

test_an_org_admin_is_refused_a_server_action if {
	_refusal({"id": "u1", "kind": "user", "server_admin": false, "disabled": false}, "roles:seed") == {"kind": "server-only", "action": "roles:seed"}
}

test_a_server_admin_is_not_refused if {
	not _refusal({"id": "u1", "kind": "user", "server_admin": true, "disabled": false}, "roles:seed")
}

test_a_service_account_is_never_a_server_admin if {
	_refusal({"id": "sa1", "kind": "service_account", "server_admin": true, "disabled": false}, "audit:read")
}

test_only_a_server_admin_reloads_the_policy if {
	admin := {"id": "u1", "kind": "user", "server_admin": false, "disabled": false}
	_refusal(admin, "server.policy:reload") == {"kind": "server-only", "action": "server.policy:reload"}
	not _refusal(object.union(admin, {"server_admin": true}), "server.policy:reload")
}

test_other_actions_are_not_server_actions if {
	not _refusal({"id": "u1", "kind": "user", "server_admin": false, "disabled": false}, "dashboards:read")
}

test_the_open_setup_wizard_lets_anyone_change_settings if {
	anyone := {"id": "", "kind": "anonymous", "server_admin": false, "disabled": false}
	not server.refusal with input as {"subject": anyone, "org_id": null, "action": "settings:write", "setup": {"open": true}}
	server.refusal with input as {"subject": anyone, "org_id": null, "action": "settings:write", "setup": {"open": false}}
}

test_every_listed_action_is_an_org_administration if {
	every action in server.org_administration {
		server.is_org_administration(action)
	}
	count({action | some action in server.org_administration}) == 10
}

test_every_server_action_is_refused_to_anyone_but_a_server_admin if {
	admin := {"id": "u1", "kind": "user", "server_admin": false, "disabled": false}
	every action in server_actions {
		server.is_server_action(action)
		_refusal(admin, action) == {"kind": "server-only", "action": action}
		not _refusal(object.union(admin, {"server_admin": true}), action)
	}
}

server_actions := [
	"roles:seed", "orgs:create", "orgs:delete", "orgs.quotas:write", "serviceaccounts:migrate",
	"audit:read", "server.policy:reload", "server.stats:read", "settings:read", "settings:write",
	"users.permissions:write", "policy.diff:run",
]
