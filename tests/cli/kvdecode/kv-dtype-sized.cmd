kvdecode --v-dtype iq4_nl
