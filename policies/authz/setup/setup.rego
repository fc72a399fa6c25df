# METADATA
# description: |
#   The setup wizard (POST /api/setup/config, POST /api/setup/complete) changes the
#   installation's settings: settings:write, a server action. Before the first user exists there
#   is no one to ask, so anyone may; afterwards only a server admin. input.setup.open says which
#   (TypeScript reads whether a user exists, and re-checks it in the transaction that writes).
package authz.setup

import data.authz.subject

# the reasons the open wizard allows action, as the decision's grants; empty otherwise. A
# function checking the action first: every decision without a target asks it.
grants(action) := [{"kind": "rule", "rule": "setup-open", "action": action}] if {
	opens(action)
} else := []

# whether the open wizard lets action past the rule that keeps server actions to server admins
opens(action) if {
	action == "settings:write"
	input.setup.open == true
	subject.is_server_level
}

# what a caller who has not signed in is told once setup is done
closed_message := "setup is done: sign in as a server admin to change it"

# whether request is a change to the closed wizard by a caller who has not signed in
refuses_anonymous(request) if {
	request.action == "settings:write"
	request.setup.open == false
	request.subject.kind == "anonymous"
}
