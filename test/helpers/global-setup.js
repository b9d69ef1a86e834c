module.exports = () => require('./pasta-da-execucao').criar();
