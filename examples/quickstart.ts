console.log('The demo arrives with the client (issue 3) and the mock service (issue 4).');
